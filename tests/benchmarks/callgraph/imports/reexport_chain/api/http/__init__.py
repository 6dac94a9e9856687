from .client import Client
