from django.urls import re_path

from live.consumers import MatchConsumer

websocket_urlpatterns = [
    re_path(r"^ws/match/(?P<match_id>[0-9a-fA-F-]{32,36})/$", MatchConsumer.as_asgi()),
]
