class Customer:
    def __init__(self, email):
        self.email = email

    def notify(self, text):
        return f"to {self.email}: {text}"


class Order:
    def __init__(self, customer_email):
        self._customer = Customer(customer_email)

    @property
    def customer(self) -> Customer:
        return self._customer


def main():
    order = Order("a@example.org")
    print(order.customer.notify("shipped"))


main()
