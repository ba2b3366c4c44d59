"""What the Function App's triggers, activities and routes share, and nothing they do: its settings read once
from the environment (``settings``), where its files are in Blob storage and its targets opened
(``storage``), a collection's golden file as the app reads it (``golden``), the steps of one run
(``steps``: what each activity does, on a collection's folder in Blob or in S3, so the AWS flow's
handlers in ``aws/`` run the same steps), and how it answers and refuses over HTTP (``http``). Every rule
lives in the library (``evaluation``); this package only connects it to the app's settings and storage,
and imports nothing of the app's own but itself."""
