"""CoDraw's own endpoints (``GameSpec.urls``; the site includes them at its root): the clip art's
configuration and PNG files for the game page, and the staff pages' SVG snapshots of a match."""
from django.urls import path

from games.codraw import views

urlpatterns = [
    path("codraw/art-config.js", views.art_config_js, name="codraw_art_config"),
    path("codraw/art/<str:name>", views.art_file, name="codraw_art_file"),
    path("research/matches/<uuid:match_id>/codraw/target.svg", views.target_svg, name="codraw_target_svg"),
    path("research/matches/<uuid:match_id>/codraw/round/<int:round_no>.svg", views.round_svg,
         name="codraw_round_svg"),
    path("research/matches/<uuid:match_id>/codraw/final.svg", views.final_svg, name="codraw_final_svg"),
    path("research/matches/<uuid:match_id>/replay/<int:seq>.svg", views.replay_svg, name="research_replay_svg"),
]
