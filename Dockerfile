FROM python:3.11-slim
WORKDIR /app
RUN apt-get update && apt-get install -y --no-install-recommends nodejs npm && rm -rf /var/lib/apt/lists/*
COPY . .
RUN pip install --no-cache-dir -e . && npm ci --no-audit --no-fund && scripts/vendor.sh
ENV PYTHONUNBUFFERED=1
EXPOSE 8000
