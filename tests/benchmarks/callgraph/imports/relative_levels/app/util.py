def render(template, **values):
    return template.format(**values)
