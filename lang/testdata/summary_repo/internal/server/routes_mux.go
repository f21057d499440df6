package server

import (
	"net/http"

	"example.com/shop/internal/store"
	"github.com/gorilla/mux"
)

// Legacy keeps the old gorilla/mux routes alive.
func Legacy() http.Handler {
	r := mux.NewRouter()
	r.HandleFunc("/v0/products", legacyProducts).Methods("GET", "HEAD")
	api := r.PathPrefix("/v0/admin").Subrouter()
	api.HandleFunc("/users/{id}", legacyUser).Methods("DELETE")
	resp, _ := http.Get("https://example.com/ping") // a client call, not a route
	_ = resp
	_ = store.Migrate
	return r
}

func legacyProducts(w http.ResponseWriter, r *http.Request) {}
func legacyUser(w http.ResponseWriter, r *http.Request)     {}
