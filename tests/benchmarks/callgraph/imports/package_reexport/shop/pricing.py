from .models import Order

UNIT_PRICE = 2


def total(order: Order):
    return order.count() * UNIT_PRICE
