package server

import (
	"crypto/tls"
	"net/http"

	"example.com/shop/internal/store"
)

// Client talks to the payment provider.
var Client = &http.Client{Transport: &http.Transport{
	TLSClientConfig: &tls.Config{InsecureSkipVerify: true},
}}

var _ = store.Migrate
