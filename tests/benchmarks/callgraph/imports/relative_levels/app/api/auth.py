def current_user():
    return "ada"
