from django.contrib import admin
from django.urls import path

from games import views

urlpatterns = [
    path("", views.home, name="home"),
    path("b/<slug:slug>/", views.batch_entry, name="batch_entry"),
    path("p/<str:token>/", views.participant_page, name="participant"),
    path("p/<str:token>/status", views.participant_status, name="participant_status"),
    path("m/<uuid:match_id>/", views.match_play, name="match_play"),
    path("m/<uuid:match_id>/partner-gone", views.match_partner_gone, name="match_partner_gone"),
    path("research/", views.research_home, name="research_home"),
    path("research/batches/<slug:slug>/", views.research_batch, name="research_batch"),
    path("research/matches/<uuid:match_id>/", views.research_match, name="research_match"),
    path("admin/", admin.site.urls),
]
