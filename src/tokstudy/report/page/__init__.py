"""The study page (``index.html``) and ``tokstudy serve``: docs/study-page.md."""
