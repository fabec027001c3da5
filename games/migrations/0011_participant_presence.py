"""Placeholder: presence of waiting participants and never-connected seats (issue 20, item 2)."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0010_practice_round'),
    ]

    operations = [
    ]
