"""The admin's old addresses of the models that left the games app (issue 22): /admin/games/<model>/...
answers a permanent redirect to the same page under the model's app now (/admin/live/batch/...,
/admin/crowd/participant/...), query string kept, so bookmarks and links from before the move work.
The admin checks its permissions at the new address."""
from __future__ import annotations

from django.apps import apps
from django.http import Http404, HttpResponsePermanentRedirect
from django.urls import path, re_path


def moved_models() -> dict[str, str]:
    """model name -> its app, for every model that kept its games_<model> table when it moved."""
    return {m._meta.model_name: m._meta.app_label for m in apps.get_models()
            if m._meta.app_label != "games" and m._meta.db_table == f"games_{m._meta.model_name}"}


def to_new_address(request, model: str = "", rest: str = ""):
    if model and model not in moved_models():
        raise Http404("No such model")
    url = f"/admin/{moved_models()[model]}/{model}/{rest}" if model else "/admin/"
    query = request.META.get("QUERY_STRING", "")
    return HttpResponsePermanentRedirect(f"{url}?{query}" if query else url)


urlpatterns = [
    path("", to_new_address),
    re_path(r"^(?P<model>[a-z]+)/(?P<rest>.*)$", to_new_address),
]
