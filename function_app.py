"""The Function App: wiring only. One blueprint per area; every rule lives in the library."""
import azure.durable_functions as df
import azure.functions as func

from activities import golden, judging, planning, report, searches
from api import bp as api_routes
from orchestrators import evaluate_golden
from triggers import evaluate_now, golden_changed

app = df.DFApp(http_auth_level=func.AuthLevel.FUNCTION)
for blueprint in (golden_changed.bp, evaluate_now.bp, evaluate_golden.bp, golden.bp, planning.bp, searches.bp,
                  judging.bp, report.bp, api_routes):
    app.register_functions(blueprint)
