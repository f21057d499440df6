// Command shop runs the shop server and its maintenance commands.
package main

import (
	"fmt"
	"os"

	"example.com/shop/internal/server"
	"example.com/shop/internal/store"
	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{Use: "shop", Short: "Run and maintain the shop"}
	serve := &cobra.Command{
		Use:   "serve [--addr ADDR]",
		Short: "Start the HTTP server",
		RunE: func(cmd *cobra.Command, args []string) error {
			return server.Run(":8080")
		},
	}
	migrate := &cobra.Command{Use: "migrate", Short: "Apply database migrations", RunE: func(*cobra.Command, []string) error {
		return store.Migrate()
	}}
	root.AddCommand(serve, migrate)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
