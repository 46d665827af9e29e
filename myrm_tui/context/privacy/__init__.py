"""Secrets and personal data kept out of what is stored and sent: redaction and its rules."""
