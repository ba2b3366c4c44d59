"""The Function App: wiring only. Blueprints for the Blob trigger, the evaluate_now route, the
orchestrator and its activities are registered here as they are built; no logic lives in this file."""
import azure.durable_functions as df
import azure.functions as func

app = df.DFApp(http_auth_level=func.AuthLevel.FUNCTION)
