from django.contrib import admin
from django.urls import include, path
from django.views.generic import RedirectView
from django.templatetags.static import static

from crowd import launch_views, pages
from crowd import views as crowd_views
from research import export_page, pictures as research_pictures, views as research_views
from live import views as live_views
from live import scene_images
from games.registry import GAMES
from groundtalk_web.crowd_pages import crowd_page

# crowd_page: the pages a worker reaches from a crowd platform, which MTurk's frame may show
# (groundtalk_web/crowd_pages.py); every other page answers X-Frame-Options: DENY.
urlpatterns = [
    path("", pages.home, name="home"),
    path("b/<slug:slug>/", crowd_page(pages.batch_entry), name="batch_entry"),
    path("b/<slug:slug>/demo/", pages.demo_entry, name="demo_entry"),   # a new demo person per visit
    path("p/<str:token>/", crowd_page(pages.participant_page), name="participant"),
    path("p/<str:token>/status", crowd_page(pages.participant_status), name="participant_status"),
    path("p/<str:token>/device/", crowd_page(crowd_views.device_start), name="device_start"),
    path("continue/", crowd_page(crowd_views.device_finish), name="device_finish"),
    path("m/<uuid:match_id>/", crowd_page(pages.match_play), name="match_play"),
    path("m/<uuid:match_id>/partner-gone", crowd_page(pages.match_partner_gone), name="match_partner_gone"),
    path("m/<uuid:match_id>/turn", crowd_page(pages.match_turn), name="match_turn"),
    path("m/<uuid:match_id>/end-stalled", crowd_page(pages.match_end_stalled), name="match_end_stalled"),
    path("m/<uuid:match_id>/img/<str:image_id>.png", crowd_page(scene_images.scene_image), name="clevr_scene_image"),
    path("schemas/<str:game_id>.json", live_views.action_schema, name="action_schema"),
    path("research/", research_views.research_home, name="research_home"),
    path("research/export/", export_page.research_export, name="research_export"),
    path("research/compare/", research_views.research_compare, name="research_compare"),
    path("research/batches/<slug:slug>/", research_views.research_batch, name="research_batch"),
    path("research/batches/<slug:slug>/lab-links/", crowd_views.lab_links, name="lab_links"),
    path("research/batches/<slug:slug>/launch/", launch_views.launch, name="crowd_launch"),
    path("research/batches/<slug:slug>/launch/<int:pk>/", launch_views.launch_action, name="crowd_launch_action"),
    path("research/batches/<slug:slug>/review/", launch_views.review, name="crowd_review"),
    path("research/batches/<slug:slug>/review.csv", launch_views.reconciliation, name="crowd_reconciliation"),
    path("research/matches/<uuid:match_id>/", research_views.research_match, name="research_match"),
    path("research/matches/<uuid:match_id>/img/<str:image_id>.png", research_views.research_match_image,
         name="research_match_image"),
    # the replay's picture and each game's pictures of a match (its monitor's PICTURES)
    *research_pictures.urlpatterns(),
    # each game's own endpoints (GameSpec.urls), at the site's root
    *(path("", include(spec.package + spec.urls if spec.urls.startswith(".") else spec.urls))
      for spec in GAMES.values() if spec.urls),
    path("admin/games/", include("groundtalk_web.moved_admin")),   # the models' old admin addresses
    path("admin/", admin.site.urls),
    # browsers that ignore base.html's <link rel="icon"> (and the admin's pages) ask for this
    path("favicon.ico", RedirectView.as_view(url=static("gt/favicon.svg"), permanent=True)),
]

# Styled pages with no settings or traceback (groundtalk_web/errors.py); 405s and hostile input: middleware.py
handler400 = "groundtalk_web.errors.bad_request"
handler403 = "groundtalk_web.errors.permission_denied"
handler404 = "groundtalk_web.errors.page_not_found"
handler500 = "groundtalk_web.errors.server_error"
