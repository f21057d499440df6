/**
 * The web front door: serves pages and proxies the API.
 * import { nothing } from "not-a-real-import";  (inside a comment)
 */
import express, { Request, Response } from "express";
import {
  formatPrice,
  type Money,
  slugify,
} from "./util/format";
import usersRouter from "./routes/users";
import * as path from "node:path";
const { exec } = require("child_process");

const app = express();
const PORT = Number(process.env.PORT ?? 3000);
const banner = `shop ${"web"} on ${PORT}`; // template with nested quotes
const pattern = /import ".*" from '(x)'/g; // a regex that looks like an import

app.use(express.json());
app.use("/api/users", usersRouter);

app.get("/", (req: Request, res: Response) => {
  res.send(`<h1>${banner}</h1>`);
});

app.post("/checkout", async (req: Request, res: Response) => {
  const price: Money = { amount: req.body.amount, currency: "EUR" };
  res.json({ total: formatPrice(price), slug: slugify(req.body.name) });
});

app.get("/files/:name", (req, res) => res.sendFile(path.join("public", req.params.name)));

app.post("/admin/run", (req, res) => {
  exec("sh ./scripts/" + req.body.task, () => res.end());
});

app.listen(PORT, () => console.log(banner, pattern));
