"""impact_ls in CI: the logic behind the composite GitHub Action (``action.yml``)."""
