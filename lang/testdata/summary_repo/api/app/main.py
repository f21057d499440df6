"""Pricing API: computes prices and discounts.

The app mounts the item router.
"""
from fastapi import FastAPI
from .routers import items
from . import db

app = FastAPI(title="pricing")
app.include_router(items.router)

API_VERSION = "1.4"


@app.get("/health")
def health():
    return {"ok": True, "version": API_VERSION}


@app.post("/quote")
async def quote(payload: dict):
    # a string that looks like code: "import os"
    return {"total": db.total(payload["sku"])}


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app, host="0.0.0.0", port=8000)
