package server

import (
	"example.com/shop/internal/store"
	"github.com/labstack/echo/v4"
)

// Echo serves the reporting endpoints.
func Echo() *echo.Echo {
	e := echo.New()
	reports := e.Group("/reports")
	reports.GET("/daily", daily)
	e.PUT("/settings", settings)
	_ = store.Migrate
	return e
}

func daily(c echo.Context) error    { return nil }
func settings(c echo.Context) error { return nil }
