"""Repository policy: what the documents name exists, the commands they give run, their budgets, no history in
the code, the layers' imports. Checks of the repository, not of behaviour; `make policy`."""
