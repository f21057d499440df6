from flask import Blueprint, Flask

bp = Blueprint("admin", __name__, url_prefix="/admin")
app = Flask(__name__)


@bp.route("/users", methods=["GET", "POST"])
def users():
    return "users"


@app.route("/")
def index():
    return "hello"


class Settings:
    debug = False

    def reload(self):
        pass


if __name__ == "__main__":
    app.register_blueprint(bp)
    app.run(debug=True)
