"""Placeholder: the clock of whose turn it is (issue 20, item 3)."""
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0011_participant_presence'),
    ]

    operations = [
    ]
