// Every page at desktop size (test/helpers/accessibility-tour.ts).
import { accessibilityTourAt } from '../helpers/accessibility-tour.ts';

accessibilityTourAt({ label: 'desktop', width: 1200, height: 800 });
