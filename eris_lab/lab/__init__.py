"""The lab around the walk: JupyterLab/Voila servers, the tuning workbench, plots and the papermill report."""
