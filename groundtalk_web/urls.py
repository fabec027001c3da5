from django.contrib import admin
from django.urls import path
from django.views.generic import RedirectView
from django.templatetags.static import static

from games import export_page, views
from games.clevr import views as clevr_views
from games.codraw import views as codraw_views

urlpatterns = [
    path("", views.home, name="home"),
    path("b/<slug:slug>/", views.batch_entry, name="batch_entry"),
    path("p/<str:token>/", views.participant_page, name="participant"),
    path("p/<str:token>/status", views.participant_status, name="participant_status"),
    path("m/<uuid:match_id>/", views.match_play, name="match_play"),
    path("m/<uuid:match_id>/partner-gone", views.match_partner_gone, name="match_partner_gone"),
    path("m/<uuid:match_id>/img/<str:image_id>.png", clevr_views.scene_image, name="clevr_scene_image"),
    path("schemas/<str:game_id>.json", views.action_schema, name="action_schema"),
    path("research/", views.research_home, name="research_home"),
    path("research/export/", export_page.research_export, name="research_export"),
    path("research/batches/<slug:slug>/", views.research_batch, name="research_batch"),
    path("research/matches/<uuid:match_id>/", views.research_match, name="research_match"),
    path("codraw/art-config.js", codraw_views.art_config_js, name="codraw_art_config"),
    path("codraw/art/<str:name>", codraw_views.art_file, name="codraw_art_file"),
    path("research/matches/<uuid:match_id>/codraw/target.svg", codraw_views.target_svg, name="codraw_target_svg"),
    path("research/matches/<uuid:match_id>/codraw/round/<int:round_no>.svg", codraw_views.round_svg,
         name="codraw_round_svg"),
    path("research/matches/<uuid:match_id>/codraw/final.svg", codraw_views.final_svg, name="codraw_final_svg"),
    path("admin/", admin.site.urls),
    # browsers that ignore base.html's <link rel="icon"> (and the admin's pages) ask for this
    path("favicon.ico", RedirectView.as_view(url=static("gt/favicon.svg"), permanent=True)),
]

# Styled pages with no settings or traceback (groundtalk_web/errors.py); 405s and hostile input: middleware.py
handler400 = "groundtalk_web.errors.bad_request"
handler403 = "groundtalk_web.errors.permission_denied"
handler404 = "groundtalk_web.errors.page_not_found"
handler500 = "groundtalk_web.errors.server_error"
