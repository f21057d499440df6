package lang

import (
	"reflect"
	"testing"
)

// Issue 12: CLI commands of kingpin, urfave/cli, argparse and click/typer,
// found only where the framework is imported and its API is used.
func TestExtractCLICommands(t *testing.T) {
	tests := []struct {
		name, path, src string
		want            []string
		frameworks      []string
	}{
		{"kingpin nested commands", "cmd/tool/main.go", `package main

import (
	"os"
	"os/exec"

	"github.com/alecthomas/kingpin/v2"
)

func main() {
	app := kingpin.New("tool", "Tooling.").UsageWriter(os.Stdout)
	checkCmd := app.Command("check", "Check the resources for validity.")
	checkConfigCmd := checkCmd.Command("config", "Check if the config files are valid.")
	checkCmd.Command("rules", rulesUsage).Hidden()
	var dump = app.Command("tsdb", "Run tsdb commands.").Command("dump", "Dump data.")
	dump.Command("openmetrics", "")
	_ = exec.Command("sh", "-c", "true")
	_ = checkConfigCmd
}
`, []string{"check: Check the resources for validity.", "check config: Check if the config files are valid.", "check rules",
			"tsdb: Run tsdb commands.", "tsdb dump: Dump data.", "tsdb dump openmetrics"}, []string{"kingpin"}},
		{"kingpin default app, gopkg.in import", "main.go", `package main

import "gopkg.in/alecthomas/kingpin.v2"

var (
	serve = kingpin.Command("serve", "Start the server.")
	stop  = kingpin.Command("stop", "Stop it.")
)
`, []string{"serve: Start the server.", "stop: Stop it."}, []string{"kingpin"}},
		{"kingpin aliased", "main.go", `package main

import kp "github.com/alecthomas/kingpin/v2"

func register(app *kp.Application) {
	app.Command("sync", "Sync now.")
}
`, []string{"sync: Sync now."}, []string{"kingpin"}},
		{"Command calls without kingpin", "main.go", `package main

import "os/exec"

func main() {
	app := newApp()
	app.Command("x", "not kingpin")
	exec.Command("ls")
}
`, []string{}, []string{}},
		{"urfave v1 slice of values", "main.go", `package main

import "github.com/urfave/cli"

func main() {
	app := cli.NewApp()
	app.Commands = []cli.Command{
		{Name: "add", Usage: "add a task"},
		{Name: "template", Usage: "task templates", Subcommands: []cli.Command{
			{Name: "remove", Usage: "remove a template"},
		}},
	}
}
`, []string{"add: add a task", "template: task templates", "template remove: remove a template"}, []string{"urfave/cli"}},
		{"urfave v2 app and standalone command", "main.go", `package main

import ucli "github.com/urfave/cli/v2"

var migrate = &ucli.Command{Name: "migrate", Usage: "apply migrations"}

func main() {
	app := &ucli.App{Commands: []*ucli.Command{
		migrate,
		{Name: "db", Subcommands: []*ucli.Command{{Name: "seed"}}},
	}}
	_ = app
}
`, []string{"migrate: apply migrations", "db", "db seed"}, []string{"urfave/cli"}},
		{"urfave v3 root command", "main.go", `package main

import "github.com/urfave/cli/v3"

func main() {
	cmd := &cli.Command{
		Commands: []*cli.Command{
			{Name: "complete", Usage: "complete a task", Commands: []*cli.Command{{Name: "all"}}},
		},
		Action: func(ctx context.Context, c *cli.Command) error { return nil },
	}
	_ = cmd
}
`, []string{"complete: complete a task", "complete all"}, []string{"urfave/cli"}},
		{"argparse nested subparsers", "tool.py", `import argparse

def main():
    parser = argparse.ArgumentParser(prog="tool")
    sub = parser.add_subparsers(dest="cmd")
    db = sub.add_parser("db", help="Database tasks.")
    dbsub = db.add_subparsers()
    dbsub.add_parser("migrate", help="Apply migrations.")
    sub.add_parser("serve")
`, []string{"db: Database tasks.", "db migrate: Apply migrations.", "serve"}, []string{"argparse"}},
		{"add_parser without argparse", "tool.py", `def main(sub):
    sub.add_parser("x")
`, []string{}, []string{}},
		{"click groups and names", "cli.py", `import click

@click.group()
def cli():
    """The tool."""

@cli.group()
def ship():
    """Manages ships."""

@ship.command("new")
@click.argument("name")
def ship_new(name):
    """Creates a new ship. More text."""

@ship.command(name="sink", help="Sinks a ship.")
def sink():
    pass

@cli.command()
def init_db_command():
    pass

@click.command("run", short_help="Run a server.")
def run_command():
    pass
`, []string{"ship: Manages ships.", "ship new: Creates a new ship.", "ship sink: Sinks a ship.", "init-db", "run: Run a server."}, []string{"click"}},
		{"typer", "app.py", `import typer

app = typer.Typer()

@app.command()
def hello_world(name: str):
    print(name)
`, []string{"hello-world"}, []string{"typer"}},
		{"flask cli commands", "app/db.py", `from flask import Flask

app = Flask(__name__)

@app.cli.command("init-db")
def init_db():
    """Clear the data."""

@app.command()
def not_a_command():
    pass
`, []string{"init-db: Clear the data."}, []string{"flask"}},
		{"command decorators without a CLI framework", "bot.py", `from .bot import bot

@bot.command()
def ping(ctx):
    pass
`, []string{}, []string{}},
		{"imported but unused framework", "util.py", `import click
import flask.json as fj

def f():
    return 1
`, []string{}, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Extract(tt.path, tt.src)
			if f.ParseNote != "" {
				t.Fatalf("parse note %q", f.ParseNote)
			}
			if got := nz(f.Commands); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("commands\n got  %q\n want %q", got, tt.want)
			}
			if got := nz(f.Frameworks); !reflect.DeepEqual(got, tt.frameworks) {
				t.Errorf("frameworks %q, want %q", got, tt.frameworks)
			}
		})
	}
}

// Issue 12: a route's framework label needs evidence (the router's
// constructor or declared type, or the file's framework import); without
// it the framework is "" (not identified), never a guess.
func TestRouteFrameworkEvidence(t *testing.T) {
	tests := []struct {
		name, path, src string
		want            []string
	}{
		{"flask blueprint with method decorators", "views.py", `from flask import Blueprint, request

bp = Blueprint("tasks", __name__, url_prefix="/tasks")

@bp.get("/result/<id>")
def result(id):
    return request.args

@bp.post("/add")
def add():
    pass
`, []string{"GET /tasks/result/<id> → result (flask, line 5)", "POST /tasks/add → add (flask, line 9)"}},
		{"fastapi router", "routers.py", `from fastapi import APIRouter

router = APIRouter(prefix="/items")

@router.get("/{id}")
def read(id: int):
    pass
`, []string{"GET /items/{id} → read (fastapi, line 5)"}},
		{"fastapi app imported from elsewhere", "routes.py", `from fastapi import Depends
from .main import app

@app.get("/health")
def health(db=Depends(session)):
    pass
`, []string{"GET /health → health (fastapi, line 4)"}},
		{"flask app route, default method", "app.py", `from flask import Flask

app = Flask(__name__)

@app.route("/")
def index():
    pass
`, []string{"GET / → index (flask, line 5)"}},
		{"constructor wins over imports", "both.py", `from flask import Flask
from fastapi import FastAPI

api = FastAPI()
web = Flask(__name__)

@api.get("/a")
def a():
    pass

@web.get("/b")
def b():
    pass
`, []string{"GET /a → a (fastapi, line 7)", "GET /b → b (flask, line 11)"}},
		{"no framework evidence", "views.py", `from . import bp

@bp.route("/x", methods=["POST"])
def x():
    pass
`, []string{"POST /x → x (, line 3)"}},
		{"go router of an unknown package, by parameter type", "api.go", `package api

import (
	"net/http"

	"github.com/prometheus/common/route"
)

func (a *API) Register(r *route.Router) {
	r.Get("/query", a.query)
	r.Post("/query", a.query)
}

func (a *API) query(w http.ResponseWriter, r *http.Request) {}
`, []string{"GET /query → a.query (github.com/prometheus/common/route, line 10)", "POST /query → a.query (github.com/prometheus/common/route, line 11)"}},
		{"go router of an unknown package, by constructor", "web.go", `package web

import (
	"net/http"

	"example.com/router"
)

func New() http.Handler {
	r := router.New()
	r.Get("/graph", graph)
	return r
}
`, []string{"GET /graph → graph (example.com/router, line 11)"}},
		{"go method-style route of unknown origin is not net/http", "web.go", `package web

import "net/http"

func Register(r Router, mux *http.ServeMux) {
	r.Get("/a", a)
	mux.HandleFunc("/b", b)
}
`, []string{"GET /a → a (, line 6)", "ANY /b → b (net/http, line 7)"}},
		{"go gin engine parameter", "routes.go", `package web

import (
	"net/http"

	"github.com/gin-gonic/gin"
)

func Routes(e *gin.Engine, w http.ResponseWriter) {
	e.GET("/ping", ping)
}
`, []string{"GET /ping → ping (gin, line 10)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := Extract(tt.path, tt.src)
			if f.ParseNote != "" {
				t.Fatalf("parse note %q", f.ParseNote)
			}
			if got := routeStrings(f.Routes); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("routes\n got  %q\n want %q", got, tt.want)
			}
		})
	}
}
