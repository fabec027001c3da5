"""CoDraw's own endpoints (``GameSpec.urls``; the site includes them at its root): the clip art's
configuration and PNG files for the game page. (The staff pages' SVG pictures of a match are
research/pictures.py's routes, drawn by monitor.py's ``PICTURES`` and ``replay_svg``.)"""
from django.urls import path

from games.codraw import views

urlpatterns = [
    path("codraw/art-config.js", views.art_config_js, name="codraw_art_config"),
    path("codraw/art/<str:name>", views.art_file, name="codraw_art_file"),
]
