from api.http import Client
