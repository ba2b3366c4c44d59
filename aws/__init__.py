"""The AWS flow: a golden file saved to S3 starts one Step Functions execution, whose Task states are
the Lambda handlers here. Layered like the Function App: ``settings`` reads the environment once,
``storage`` reaches the bucket, ``trigger`` starts executions, ``handlers`` are the state machine's
steps (decode, one call to ``app.steps`` or the library, encode). The template is ``infra/aws/``."""
