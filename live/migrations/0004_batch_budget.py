# Issue 24, item 5: a batch's budget in US dollars (crowd/costs.py stops new entries when it is reached).

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('live', '0003_arms'),
    ]

    operations = [
        migrations.AddField(
            model_name='batch',
            name='budget_usd',
            field=models.DecimalField(blank=True, decimal_places=2, help_text="Budget in US dollars: crowd pay (base, bonuses, the platform's fee) and model cost. When the money committed (completed and in-progress participants at the base rate, bonuses, model calls so far) plus one more participant would pass it, new entries are refused. Empty: no budget.", max_digits=10, null=True),
        ),
    ]
