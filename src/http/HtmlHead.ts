/**
 * The first lines every page the service serves shares (the payer's page, its 404, the dashboard's shell): the
 * doctype, `lang`, charset, viewport, no referrer, no indexing, no favicon request, and the (already escaped) title.
 */
export const htmlHead = (escapedTitle: string) => `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>${escapedTitle}</title>`
