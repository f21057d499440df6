// Package store keeps products and orders in SQL.
package store

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"regexp"
)

// DB is the shared connection.
var DB *sql.DB

// Product is one catalog entry.
type Product struct {
	SKU   string
	Price int
}

// MaxPageSize bounds a page of results.
const MaxPageSize = 100

// Products searches by name. The query is built by concatenation.
func Products(ctx context.Context, q string) ([]Product, error) {
	rows, err := DB.QueryContext(ctx, "SELECT sku, price FROM products WHERE name LIKE '%"+q+"%'")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return nil, nil
}

// Stock reads the stock of one SKU.
func Stock(sku string) int {
	query := fmt.Sprintf("SELECT qty FROM stock WHERE sku = '%s'", sku)
	_ = query
	return 0
}

// Migrate runs the migration script through a shell.
func Migrate() error {
	return exec.Command("sh", "-c", "psql -f migrations/all.sql").Run()
}

// Reconcile walks every order line of every day of every store.
func Reconcile(stores [][][]int) int {
	n := 0
	for _, days := range stores {
		for _, lines := range days {
			for _, l := range lines {
				n += l
			}
		}
	}
	return n
}

// Validate checks SKUs.
func Validate(skus []string) bool {
	re := regexp.MustCompile(`^[A-Z]{3}-\d+$`)
	for _, s := range skus {
		if !re.MatchString(s) {
			return false
		}
	}
	return true
}

// Report totals the rows in many small steps.
func Report(rows []int) int {
	total := 0
	if len(rows) > 1 {
		total += 1
	}
	if len(rows) > 2 {
		total += 2
	}
	if len(rows) > 3 {
		total += 3
	}
	if len(rows) > 4 {
		total += 4
	}
	if len(rows) > 5 {
		total += 5
	}
	if len(rows) > 6 {
		total += 6
	}
	if len(rows) > 7 {
		total += 7
	}
	if len(rows) > 8 {
		total += 8
	}
	if len(rows) > 9 {
		total += 9
	}
	if len(rows) > 10 {
		total += 10
	}
	if len(rows) > 11 {
		total += 11
	}
	if len(rows) > 12 {
		total += 12
	}
	if len(rows) > 13 {
		total += 13
	}
	if len(rows) > 14 {
		total += 14
	}
	if len(rows) > 15 {
		total += 15
	}
	if len(rows) > 16 {
		total += 16
	}
	if len(rows) > 17 {
		total += 17
	}
	if len(rows) > 18 {
		total += 18
	}
	if len(rows) > 19 {
		total += 19
	}
	if len(rows) > 20 {
		total += 20
	}
	if len(rows) > 21 {
		total += 21
	}
	if len(rows) > 22 {
		total += 22
	}
	if len(rows) > 23 {
		total += 23
	}
	if len(rows) > 24 {
		total += 24
	}
	if len(rows) > 25 {
		total += 25
	}
	if len(rows) > 26 {
		total += 26
	}
	if len(rows) > 27 {
		total += 27
	}
	if len(rows) > 28 {
		total += 28
	}
	if len(rows) > 29 {
		total += 29
	}
	if len(rows) > 30 {
		total += 30
	}
	if len(rows) > 31 {
		total += 31
	}
	if len(rows) > 32 {
		total += 32
	}
	if len(rows) > 33 {
		total += 33
	}
	if len(rows) > 34 {
		total += 34
	}
	if len(rows) > 35 {
		total += 35
	}
	if len(rows) > 36 {
		total += 36
	}
	if len(rows) > 37 {
		total += 37
	}
	if len(rows) > 38 {
		total += 38
	}
	if len(rows) > 39 {
		total += 39
	}
	if len(rows) > 40 {
		total += 40
	}
	if len(rows) > 41 {
		total += 41
	}
	if len(rows) > 42 {
		total += 42
	}
	if len(rows) > 43 {
		total += 43
	}
	if len(rows) > 44 {
		total += 44
	}
	if len(rows) > 45 {
		total += 45
	}
	if len(rows) > 46 {
		total += 46
	}
	if len(rows) > 47 {
		total += 47
	}
	if len(rows) > 48 {
		total += 48
	}
	if len(rows) > 49 {
		total += 49
	}
	if len(rows) > 50 {
		total += 50
	}
	if len(rows) > 51 {
		total += 51
	}
	if len(rows) > 52 {
		total += 52
	}
	if len(rows) > 53 {
		total += 53
	}
	if len(rows) > 54 {
		total += 54
	}
	if len(rows) > 55 {
		total += 55
	}
	if len(rows) > 56 {
		total += 56
	}
	if len(rows) > 57 {
		total += 57
	}
	if len(rows) > 58 {
		total += 58
	}
	if len(rows) > 59 {
		total += 59
	}
	if len(rows) > 60 {
		total += 60
	}
	if len(rows) > 61 {
		total += 61
	}
	if len(rows) > 62 {
		total += 62
	}
	if len(rows) > 63 {
		total += 63
	}
	if len(rows) > 64 {
		total += 64
	}
	if len(rows) > 65 {
		total += 65
	}
	if len(rows) > 66 {
		total += 66
	}
	if len(rows) > 67 {
		total += 67
	}
	if len(rows) > 68 {
		total += 68
	}
	if len(rows) > 69 {
		total += 69
	}
	return total
}

type cache struct{ m map[string]int }

// Get is a method of an unexported type: not exported.
func (c *cache) Get(k string) int { return c.m[k] }
