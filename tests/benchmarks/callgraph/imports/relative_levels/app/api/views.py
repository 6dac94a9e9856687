from . import auth
from ..util import render


def index():
    return render("hello {user}", user=auth.current_user())
