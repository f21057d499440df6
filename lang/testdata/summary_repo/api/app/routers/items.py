from fastapi import APIRouter, Depends
from ..db import (
    session,
    total,  # used by the quote route
)

router = APIRouter(prefix="/items", tags=["items"])


@router.get("/{sku}")
def read_item(sku: str):
    rows = session().execute(f"SELECT * FROM items WHERE sku = '{sku}'")
    return rows


@router.api_route("/{sku}/price", methods=["GET", "PUT"])
def price(sku: str):
    return {"price": total(sku)}


def _private_helper():
    pass
