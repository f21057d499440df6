// Package server wires the HTTP routes of the shop.
package server

import (
	"encoding/json"
	"net/http"

	"example.com/shop/internal/store"
	"github.com/go-chi/chi/v5"
)

// Run serves the API on addr.
func Run(addr string) error {
	r := chi.NewRouter()
	r.Get("/healthz", health)
	r.Route("/api/v1", func(r chi.Router) {
		r.Get("/products", listProducts)
		r.Post("/products", createProduct)
		r.Route("/orders", func(r chi.Router) {
			r.Get("/{id}", getOrder)
		})
	})
	r.Mount("/admin", adminRouter())
	mux := http.NewServeMux()
	mux.HandleFunc("GET /metrics", metrics)
	mux.Handle("/", r)
	http.HandleFunc("/debug/vars", metrics) // legacy endpoint
	// http.HandleFunc("/commented", nope) must not count
	return http.ListenAndServe(addr, mux)
}

func health(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) }

func listProducts(w http.ResponseWriter, r *http.Request) {
	ps, err := store.Products(r.Context(), r.URL.Query().Get("q"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	json.NewEncoder(w).Encode(ps)
}

func createProduct(w http.ResponseWriter, r *http.Request) {}
func getOrder(w http.ResponseWriter, r *http.Request)      {}
func metrics(w http.ResponseWriter, r *http.Request)       {}
func adminRouter() http.Handler                            { return http.NotFoundHandler() }
