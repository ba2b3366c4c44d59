"""The Function App: wiring only. Blueprints for the Blob trigger, the evaluate_now route, the
orchestrator and its activities are registered here as they are built; no logic lives in this file."""
import azure.durable_functions as df
import azure.functions as func

from api import bp as api_routes

app = df.DFApp(http_auth_level=func.AuthLevel.FUNCTION)
app.register_functions(api_routes)
