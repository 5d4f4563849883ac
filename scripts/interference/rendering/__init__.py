"""The paper: the Document the report's .qmd reads (every study's section, the findings, the
changes between sessions) and the render step that turns it into report/paper.html (Quarto, or
the nbconvert fallback with its template in template/)."""
