import { Router } from "express";
import { Pool } from "pg";

const router = Router();
const pool = new Pool();

// GET /api/users/:id — note the apostrophe in "user's" inside a comment
router.get("/:id", async (req, res) => {
  const { rows } = await pool.query(`SELECT * FROM users WHERE id = ${req.params.id}`);
  res.json(rows[0]);
});

router
  .route("/:id/orders")
  .get(listOrders)
  .post(createOrder);

function listOrders(req: any, res: any) {
  res.json([]);
}

function createOrder(req: any, res: any) {
  for (const a of req.body.items) {
    for (const b of a.parts) {
      for (const c of b.pieces) {
        res.write(String(c));
      }
    }
  }
  res.end();
}

export default router;
