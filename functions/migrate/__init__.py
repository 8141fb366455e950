"""The migration function (app.py): the schema upgraded at deploy time, by a CDK trigger."""
