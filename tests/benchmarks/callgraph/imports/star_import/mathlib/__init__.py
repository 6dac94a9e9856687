from .stats import *
