package server

import (
	"example.com/shop/internal/store"
	"github.com/gin-gonic/gin"
)

// Gin serves the partner API with gin.
func Gin() *gin.Engine {
	g := gin.New()
	v2 := g.Group("/partner/v2")
	{
		v2.GET("/stock/:sku", func(c *gin.Context) { c.JSON(200, store.Stock(c.Param("sku"))) })
		v2.POST("/orders", partnerOrder)
	}
	g.Handle("DELETE", "/cache", flush)
	return g
}

func partnerOrder(c *gin.Context) {}
func flush(c *gin.Context)        {}
