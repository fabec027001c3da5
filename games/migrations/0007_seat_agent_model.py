from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("games", "0006_crowd_identity_and_pay"),
    ]

    operations = [
        migrations.AddField(
            model_name="seat",
            name="agent_model",
            field=models.JSONField(blank=True, default=dict),
        ),
    ]
