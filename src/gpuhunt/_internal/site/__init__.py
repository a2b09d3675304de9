"""The catalog web page: `gpuhunt catalog site OUT` (`build`), over the page's data (`data`)."""
