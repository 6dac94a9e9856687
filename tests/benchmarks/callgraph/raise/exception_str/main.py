class ValidationError(Exception):
    def __init__(self, field, problem):
        super().__init__(field, problem)
        self.field = field
        self.problem = problem

    def __str__(self):
        return f"{self.field}: {self.problem}"


def validate(record):
    if "name" not in record:
        raise ValidationError("name", "required")


def main():
    try:
        validate({})
    except ValidationError as exc:
        print(f"invalid record ({exc})")


main()
