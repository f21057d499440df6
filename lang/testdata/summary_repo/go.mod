module example.com/shop

go 1.22

require (
	github.com/gin-gonic/gin v1.10.0
	github.com/go-chi/chi/v5 v5.0.12
	github.com/gorilla/mux v1.8.1
	github.com/labstack/echo/v4 v4.12.0
	github.com/spf13/cobra v1.8.0
)
