// Command rulecost times each gitleaks rule's regexp over the text files of
// a tree, the way gitleaks' detector applies it (only on files whose
// lowercased text holds one of the rule's keywords), to show which rules a
// secret scan spends its time in.
//
//	go run ./bench/cmd/rulecost DIR
package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/zricethezav/gitleaks/v8/detect"
)

func main() {
	det, err := detect.NewDetectorDefaultConfig()
	if err != nil {
		panic(err)
	}
	var texts []string
	total := 0
	filepath.WalkDir(os.Args[1], func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".git" {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		head := b
		if len(head) > 8<<10 {
			head = head[:8<<10]
		}
		if bytes.IndexByte(head, 0) >= 0 {
			return nil
		}
		texts = append(texts, string(b))
		total += len(b)
		return nil
	})
	lower := make([]string, len(texts))
	for i, t := range texts {
		lower[i] = strings.ToLower(t)
	}
	type cost struct {
		id    string
		d     time.Duration
		files int
		bytes int
	}
	var costs []cost
	var sum time.Duration
	for id, r := range det.Config.Rules {
		if r.Regex == nil {
			continue
		}
		c := cost{id: id}
		start := time.Now()
		for i, t := range texts {
			hit := len(r.Keywords) == 0
			for _, k := range r.Keywords {
				if strings.Contains(lower[i], strings.ToLower(k)) {
					hit = true
					break
				}
			}
			if !hit {
				continue
			}
			c.files++
			c.bytes += len(t)
			r.Regex.FindAllStringIndex(t, -1)
		}
		c.d = time.Since(start)
		sum += c.d
		costs = append(costs, c)
	}
	sort.Slice(costs, func(i, j int) bool { return costs[i].d > costs[j].d })
	fmt.Printf("%d files, %d bytes, all rules %v (one core)\n", len(texts), total, sum.Round(time.Millisecond))
	for _, c := range costs[:25] {
		fmt.Printf("%-40s %8v %5.1f%% files %6d  MB %6.1f  MB/s %7.1f\n", c.id, c.d.Round(time.Millisecond), 100*float64(c.d)/float64(sum), c.files, float64(c.bytes)/1e6, float64(c.bytes)/1e6/c.d.Seconds())
	}
}
