/* MuJoCo by Experiment: search result summaries from the chapter's text only.
 *
 * Sphinx's search page summarises each hit with the text of the page's [role="main"] element.
 * In sphinx-book-theme that element also holds the article's header buttons ("Binder Colab
 * .ipynb .pdf System Settings Light Dark"), a print-only title and table of contents
 * ("Contents 1 · ...") and the page's "Contents" sidebar, so summaries began with those
 * words.  This reads the article (article.bd-article) instead, as Sphinx reads [role="main"]:
 * the section of the hit's #anchor when there is one, header links, scripts and styles removed,
 * and so are the collapsed reference solutions (details.hide): a summary never shows what a
 * reader has not asked to see.
 */
"use strict";
document.addEventListener("DOMContentLoaded", () => {
  if (typeof Search === "undefined" || typeof Search.htmlToText !== "function") return;
  const sphinxText = Search.htmlToText;
  Search.htmlToText = (htmlString, anchor) => {
    const page = new DOMParser().parseFromString(htmlString, "text/html");
    const article = page.querySelector("article.bd-article");
    if (!article) return sphinxText(htmlString, anchor);
    article.querySelectorAll(".headerlink, script, style, details.hide").forEach((el) => el.remove());
    let section = null;
    try {
      section = anchor ? article.querySelector(anchor) : null;
    } catch (error) {  // an anchor that is not a valid selector: the whole article
      section = null;
    }
    return (section || article).textContent;
  };
});
