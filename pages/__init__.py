"""Streamlit pages of Chunk Explorer (thin: every decision lives in ``explorer/``)."""
