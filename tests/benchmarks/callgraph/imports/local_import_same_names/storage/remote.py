def save(data):
    return f"remote:{data}"
