package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/ctxpack/ctxpack/pack"
)

func main() {
	data, _ := os.ReadFile(os.Args[1])
	var m map[string]json.RawMessage
	json.Unmarshal(data, &m)
	for k, v := range m {
		n, _ := pack.CountTokens(string(v))
		fmt.Printf("%-14s %6d\n", k, n)
	}
	var md map[string]json.RawMessage
	json.Unmarshal(m["metadata"], &md)
	for k, v := range md {
		n, _ := pack.CountTokens(string(v))
		if n > 50 {
			fmt.Printf("  metadata.%-20s %6d\n", k, n)
		}
	}
}
