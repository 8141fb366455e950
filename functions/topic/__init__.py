"""The topic function (``app.py``): the CloudFormation custom resource that makes the Kafka
topics from inside the VPC."""
